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

"""Log in to a running sandbox Horizon and load a few admin pages.

    python -m sandbox.check_horizon [http://127.0.0.1:8000] [--password PW]

Exit 0 when login works and every page answers 200 (no redirect to login).
"""
import argparse
import re
import sys

import requests

PAGES = ('/admin/hypervisors/', '/admin/orphaned_allocations/')


def login(base, username='admin', password='sandbox-admin',
          domain='Default'):
    s = requests.Session()
    r = s.get(base + '/auth/login/', timeout=60)
    r.raise_for_status()
    region = re.search(r'name="region" value="([^"]*)"', r.text)
    r = s.post(base + '/auth/login/', timeout=60, allow_redirects=False,
               headers={'Referer': base + '/auth/login/'},
               data={'csrfmiddlewaretoken': s.cookies.get('csrftoken'),
                     'username': username, 'password': password,
                     'domain': domain,
                     'region': region.group(1) if region else ''})
    location = r.headers.get('Location', '')
    if r.status_code != 302 or '/auth/login' in location:
        raise RuntimeError('login failed: %s %s' % (r.status_code, location))
    return s


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('base', nargs='?', default='http://127.0.0.1:8000')
    p.add_argument('--password', default='sandbox-admin')
    p.add_argument('pages', nargs='*', default=list(PAGES))
    a = p.parse_args(argv)
    base = a.base.rstrip('/')
    s = login(base, password=a.password)
    print('login ok')
    rc = 0
    for page in a.pages:
        r = s.get(base + page, timeout=120, allow_redirects=False)
        print('%s %s %s' % (page, r.status_code,
                            r.headers.get('Location', '')))
        if r.status_code != 200:
            rc = 1
    return rc


if __name__ == '__main__':
    sys.exit(main())
