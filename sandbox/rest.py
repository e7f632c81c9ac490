# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""A tiny REST helper over a keystoneauth session (used to stage incidents)."""
import time
import urllib.parse

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session

from sandbox import common


def password_session(auth_url, username, password, project_name,
                     domain='Default'):
    auth = v3.Password(auth_url=auth_url, username=username,
                       password=password, project_name=project_name,
                       user_domain_name=domain, project_domain_name=domain)
    return ks_session.Session(auth=auth)


class ApiError(Exception):
    def __init__(self, method, url, status, text):
        super().__init__('%s %s -> %s: %s' % (method, url, status, text[:500]))
        self.status = status
        self.text = text


class Api:
    """Nova and Placement calls with an explicit microversion each time
    (and Neutron's, which has none, and Cyborg's, when the sandbox runs
    them)."""

    def __init__(self, session, nova_url, placement_url, neutron_url=None,
                 cyborg_url=None):
        self.session = session
        self.nova_url = nova_url.rstrip('/')
        self.placement_url = placement_url.rstrip('/')
        self.neutron_url = neutron_url and neutron_url.rstrip('/')
        self.cyborg_url = cyborg_url and cyborg_url.rstrip('/')

    def _call(self, base, service, method, path, body, mv, ok):
        """``mv=None`` sends no microversion: the service's oldest."""
        headers = {'Accept': 'application/json'}
        if mv is not None:
            headers['OpenStack-API-Version'] = '%s %s' % (service, mv)
        url = base + path
        resp = self.session.request(url, method, json=body, headers=headers,
                                    raise_exc=False)
        if ok is not None and resp.status_code not in ok:
            raise ApiError(method, url, resp.status_code, resp.text)
        return resp

    def nova(self, method, path, body=None, mv='2.94',
             ok=(200, 201, 202, 204)):
        resp = self._call(self.nova_url, 'compute', method, path, body, mv, ok)
        return resp.json() if resp.content else None

    def nova_raw(self, method, path, body=None, mv='2.94'):
        return self._call(self.nova_url, 'compute', method, path, body, mv,
                          None)

    def placement(self, method, path, body=None, mv='1.28',
                  ok=(200, 201, 204)):
        resp = self._call(self.placement_url, 'placement', method, path, body,
                          mv, ok)
        return resp.json() if resp.content else None

    def neutron(self, method, path, body=None, ok=(200, 201, 204)):
        """``path`` under ``/v2.0``.  An internal error is not a refusal:
        the sandbox's Neutron keeps its database in sqlite, which a busy
        machine can hold locked past a request that may still have been
        applied.  A create is read back before it is asked again (a blind
        second POST staged a second port), a delete that finds nothing on
        its second try was done by the first."""
        base = self.neutron_url + '/v2.0'
        try:
            resp = self._call(base, 'network', method, path, body, None, ok)
        except ApiError as exc:
            if exc.status < 500:
                raise
            common.log('neutron %s %s -> %s, read back' % (
                method, path, exc.status))
            time.sleep(1)
            made = method == 'POST' and self._created(base, path, body)
            if made:
                return made
            again = ok + (404,) if method == 'DELETE' else ok
            resp = self._call(base, 'network', method, path, body, None,
                              again)
        return resp.json() if resp.content else None

    def cyborg(self, method, path, body=None, ok=(200, 201, 204)):
        """``path`` under Cyborg's ``/v2``, at its oldest microversion."""
        resp = self._call(self.cyborg_url, 'accelerator', method, path, body,
                          None, ok)
        return resp.json() if resp.content else None

    def _created(self, base, path, body):
        """What an answered-with-5xx create left behind, as its create
        would have returned it, or None when it left nothing."""
        (singular, fields), = body.items()
        scalars = {k: v for k, v in fields.items()
                   if isinstance(v, (str, int)) and not isinstance(v, bool)}
        params = {'name': fields['name']} if 'name' in fields else scalars
        query = '?' + urllib.parse.urlencode(params) if params else ''
        listed = self._call(base, 'network', 'GET', path + query, None,
                            None, (200,)).json()
        found = listed[path.rstrip('/').rsplit('/', 1)[-1]]
        return {singular: found[0]} if found else None

    # ---------------------------------------------------------- helpers
    def server(self, uuid):
        return self.nova('GET', '/servers/%s' % uuid)['server']

    def wait_server(self, uuid, pred, timeout=60, what='condition'):
        deadline = time.monotonic() + timeout
        server = None
        while time.monotonic() < deadline:
            server = self.server(uuid)
            if pred(server):
                return server
            time.sleep(0.2)
        raise TimeoutError('server %s: %s not reached; last status=%s '
                           'task_state=%s host=%s' % (
                               uuid, what, server and server['status'],
                               server and server.get('OS-EXT-STS:task_state'),
                               server and server.get('OS-EXT-SRV-ATTR:host')))

    def wait_settled(self, uuid, *statuses, host=None):
        """Wait until the server is in one of ``statuses`` with no task
        under way (and on ``host`` where given); the server."""
        return self.wait_server(
            uuid, lambda x: x['status'] in statuses and
            not x.get('OS-EXT-STS:task_state') and
            host in (None, x.get('OS-EXT-SRV-ATTR:host')),
            what=' or '.join(statuses) + (' on %s' % host if host else ''))

    def act(self, uuid, action, *statuses, host=None, mv='2.94'):
        """POST the server action ``action`` (its body) on ``uuid``, then
        :meth:`wait_settled` in ``statuses``."""
        self.nova('POST', '/servers/%s/action' % uuid, action, mv=mv)
        return self.wait_settled(uuid, *statuses, host=host)

    def migrations(self, instance_uuid):
        return self.nova('GET', '/os-migrations?instance_uuid=%s'
                         % instance_uuid, mv='2.80')['migrations']

    def wait_migration(self, instance_uuid, statuses, timeout=60):
        deadline = time.monotonic() + timeout
        migs = []
        while time.monotonic() < deadline:
            migs = self.migrations(instance_uuid)
            if migs and migs[0]['status'] in statuses:
                return migs[0]
            time.sleep(0.2)
        raise TimeoutError('migration of %s never reached %s: %s'
                           % (instance_uuid, statuses, migs))

    def allocations(self, consumer):
        """{rp uuid: resources} of one consumer."""
        body = self.placement('GET', '/allocations/%s' % consumer)
        return {rp: a['resources']
                for rp, a in body.get('allocations', {}).items()}
