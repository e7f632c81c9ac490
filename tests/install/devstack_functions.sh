# A stand-in for the DevStack functions devstack/plugin.sh calls, sourced
# by tests/install/test_devstack.py before the plugin (DevStack itself
# cannot run here).  Not DevStack: its database is a sqlite file in
# $STUB_DATA instead of the MySQL database DevStack would create.

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

# DevStack drops the database and creates it empty.
function recreate_database {
    rm -f "$STUB_DATA/$1.sqlite3"
}

# DevStack prints mysql+pymysql://$DATABASE_USER:$DATABASE_PASSWORD@
# $DATABASE_HOST/$1?charset=utf8.
function database_connection_url {
    echo "sqlite:///$STUB_DATA/$1.sqlite3"
}
