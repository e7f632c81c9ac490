#!/bin/bash
# orphan-dashboard's DevStack plugin: DevStack sources it once per phase,
# with the phase as its arguments ("stack install", "stack post-config",
# "unstack", "clean").
#
#   stack install       pip install -e the plugin (setup_develop)
#   stack post-config   the enabled file and the settings snippet into
#                       Horizon's local/, the journal's database created on
#                       DevStack's database server and migrated, the
#                       snapshot in DevStack's memcached, and (with
#                       ORPHAN_DASHBOARD_GC_FREEZE) Apache's Horizon served
#                       through the WSGI script that freezes its objects;
#                       DevStack's init_horizon then runs collectstatic and
#                       compress, start_horizon restarts Apache
#   clean               removes what post-config put into Horizon's local/
#                       (DevStack's cleanup_horizon removes Apache's site)

ORPHAN_DASHBOARD_ENABLED=_2170_admin_orphaned_allocations_panel
ORPHAN_DASHBOARD_SNIPPET=_90_orphan_dashboard
# Sorted before the snippet, which keeps the journal it finds.
ORPHAN_DASHBOARD_DEVSTACK_SNIPPET=_85_orphan_dashboard_devstack
ORPHAN_DASHBOARD_WSGI=horizon_frozen.wsgi

function _orphan_dashboard_python_string {
    "$PYTHON" -c 'import sys; print(repr(sys.argv[1]))' "$1"
}

function _orphan_dashboard_python_list {
    "$PYTHON" -c 'import sys; print(repr(sys.argv[1:]))' "$@"
}

# The settings DevStack adds: the journal on its database server, the
# snapshot in its memcached, the Python that runs background sweeps (under
# Apache's mod_wsgi the process's executable is not one).
function _orphan_dashboard_devstack_settings {
    local url servers
    url=$(database_connection_url "$ORPHAN_DASHBOARD_JOURNAL_DB")
    servers=${ORPHAN_DASHBOARD_CACHE:-${MEMCACHE_SERVERS:-localhost:11211}}
    echo "# Written by orphan-dashboard's DevStack plugin (devstack/plugin.sh)."
    if [[ "$url" == mysql+pymysql:* ]]; then
        echo "import pymysql"
        echo "pymysql.install_as_MySQLdb()"
    fi
    cat <<PYTHON
from orphan_dashboard import conf as _orphan_conf

DATABASES = dict(globals().get('DATABASES') or {'default': {}})
DATABASES[_orphan_conf.JOURNAL_DATABASE] = _orphan_conf.journal_from_url(
    $(_orphan_dashboard_python_string "$url"))
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.memcached.PyMemcacheCache',
    'LOCATION': $(_orphan_dashboard_python_list ${servers//,/ }),
}}
ORPHAN_AUDIT_SWEEP_PYTHON = $(_orphan_dashboard_python_string "$PYTHON")
PYTHON
}

function orphan_dashboard_install {
    setup_develop "$ORPHAN_DASHBOARD_DIR"
}

function orphan_dashboard_configure {
    local package=$ORPHAN_DASHBOARD_DIR/orphan_dashboard
    local local_dir=$HORIZON_DIR/openstack_dashboard/local
    cp "$package/enabled/$ORPHAN_DASHBOARD_ENABLED.py" "$local_dir/enabled/"
    recreate_database "$ORPHAN_DASHBOARD_JOURNAL_DB"
    _orphan_dashboard_devstack_settings \
        > "$local_dir/local_settings.d/$ORPHAN_DASHBOARD_DEVSTACK_SNIPPET.py"
    cp "$package/local_settings.d/$ORPHAN_DASHBOARD_SNIPPET.py" \
        "$local_dir/local_settings.d/"
    # compilemessages fails without a locale directory.
    if [[ -d "$package/locale" ]]; then
        (cd "$package" && DJANGO_SETTINGS_MODULE=openstack_dashboard.settings \
            "$PYTHON" -m django compilemessages)
    fi
    DJANGO_SETTINGS_MODULE=openstack_dashboard.settings "$PYTHON" -m django \
        migrate orphan_dashboard --database orphan_journal --verbosity 0
}

# Horizon's site in DevStack's Apache (written by configure_horizon, before
# post-config) serves the plugin's WSGI script, copied into Horizon's
# local/, which the site's <Directory> already grants.
function orphan_dashboard_freeze_horizon {
    local package=$ORPHAN_DASHBOARD_DIR/orphan_dashboard
    local script=$HORIZON_DIR/openstack_dashboard/local/$ORPHAN_DASHBOARD_WSGI
    cp "$package/$ORPHAN_DASHBOARD_WSGI" "$script"
    sudo sed -i -e "s,^\(\s*WSGIScriptAlias\s\+\S\+\s\+\).*$,\1$script," \
        "$(apache_site_config_for horizon)"
}

function orphan_dashboard_clean {
    local local_dir=$HORIZON_DIR/openstack_dashboard/local
    rm -f "$local_dir/enabled/$ORPHAN_DASHBOARD_ENABLED".py* \
        "$local_dir/enabled/__pycache__/$ORPHAN_DASHBOARD_ENABLED".*.pyc \
        "$local_dir/local_settings.d/$ORPHAN_DASHBOARD_DEVSTACK_SNIPPET".py* \
        "$local_dir/local_settings.d/$ORPHAN_DASHBOARD_SNIPPET".py* \
        "$local_dir/$ORPHAN_DASHBOARD_WSGI"
}

if is_service_enabled horizon; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing orphan-dashboard"
        orphan_dashboard_install
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring orphan-dashboard"
        orphan_dashboard_configure
        if [[ "$ORPHAN_DASHBOARD_GC_FREEZE" == "True" ]]; then
            orphan_dashboard_freeze_horizon
        fi
    fi
    if [[ "$1" == "clean" ]]; then
        orphan_dashboard_clean
    fi
fi
