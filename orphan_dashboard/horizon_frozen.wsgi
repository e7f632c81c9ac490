# Horizon's WSGI script with Horizon's objects frozen once loaded
# (orphan_dashboard/wsgi.py says why): point mod_wsgi's WSGIScriptAlias,
# or uWSGI's wsgi-file, at this file in place of Horizon's own
# openstack_dashboard/wsgi.py, which it runs first.
from openstack_dashboard.wsgi import application
from orphan_dashboard.wsgi import frozen

application = frozen(application)
