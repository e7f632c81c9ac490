# A stand-in for the DevStack functions devstack/plugin.sh calls, sourced
# by tests/install/test_devstack.py before the plugin (DevStack itself
# cannot run here).  Not DevStack: its database server is the test's
# throwaway MariaDB on a Unix socket ($STUB_MYSQL_SOCKET), root without a
# password.

function echo_summary {
    echo "$@"
}

function is_service_enabled {
    local service
    for service in "$@"; do
        [[ ",$ENABLED_SERVICES," == *",$service,"* ]] && return 0
    done
    return 1
}

# DevStack's pip install -e, with the package's dependencies.
function setup_develop {
    "$PYTHON" -m pip install -q -e "$1"
}

# As DevStack's recreate_database_mysql: dropped, then created empty.
function recreate_database {
    "$STUB_MYSQL" --no-defaults --user=root --socket="$STUB_MYSQL_SOCKET" \
        --execute="DROP DATABASE IF EXISTS $1; CREATE DATABASE $1 CHARACTER SET utf8;"
}

# DevStack prints mysql+pymysql://$DATABASE_USER:$DATABASE_PASSWORD@
# $DATABASE_HOST/$1?charset=utf8; here the socket names the server.
function database_connection_url {
    echo "mysql+pymysql://root@localhost/$1?charset=utf8&unix_socket=$STUB_MYSQL_SOCKET"
}

# As DevStack's: True or False from the variable named $2, else $1.
function trueorfalse {
    case "${!2:-}" in
        1|[yY]es|YES|[tT]rue|TRUE) echo True ;;
        0|[nN]o|NO|[fF]alse|FALSE) echo False ;;
        *) echo "$1" ;;
    esac
}

# Apache's site files are the test's ($STUB_APACHE_CONF_DIR), its own user's.
function apache_site_config_for {
    echo "$STUB_APACHE_CONF_DIR/$1.conf"
}

function sudo {
    "$@"
}
