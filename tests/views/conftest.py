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

"""Guards for every view test.

* No call may leave the test: Horizon's own guard patches
  ``http.client.HTTPConnection.connect``, which urllib3 (and so
  keystoneauth) bypasses, and a view that catches the error would only turn
  it into a message.  Any ``keystoneauth1`` request fails the test, even if
  a view swallowed the exception.
* No unexpected error message: a test expecting some says so with
  ``@pytest.mark.error_messages``; the messages a test caused are on
  ``self.messages_seen`` for exact assertions.
"""

import copy
import types
from unittest import mock

from django.contrib.messages import constants
from django.contrib.messages.storage import base as messages_base
from django.utils.encoding import force_str
import pytest
import yaml


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'error_messages: the test expects error messages')


class Seen(list):
    """``(level tag, text)`` of every message added during a test."""

    def texts(self, tag):
        return [text for level, text in self if level == tag]


@pytest.fixture(autouse=True, scope='session')
def default_policies_parsed_once():
    """Horizon's default policy files, thousands of lines of YAML, parsed
    once a session: the engine parses them again each time it is reset,
    which the policy tests do for every set of rules they try."""
    from openstack_auth import policy
    parsed = {}

    def safe_load(stream):
        if stream.name not in parsed:
            parsed[stream.name] = yaml.safe_load(stream)
        return copy.deepcopy(parsed[stream.name])

    with mock.patch.object(policy, 'yaml', types.SimpleNamespace(
            safe_load=safe_load, YAMLError=yaml.YAMLError)):
        yield


@pytest.fixture(autouse=True)
def no_cloud_calls():
    calls = []

    def refuse(session, url, method, *args, **kwargs):
        calls.append((method, url))
        raise AssertionError('unmocked API call: %s %s' % (method, url))

    with mock.patch('keystoneauth1.session.Session.request', autospec=True,
                    side_effect=refuse):
        yield calls
    assert not calls, 'unmocked API calls: %s' % calls


@pytest.fixture(autouse=True)
def messages_seen(request):
    seen = Seen()
    add = messages_base.BaseStorage.add

    def record(storage, level, message, extra_tags=''):
        seen.append((constants.DEFAULT_TAGS.get(level, str(level)),
                     force_str(message)))
        return add(storage, level, message, extra_tags)

    if request.instance is not None:
        request.instance.messages_seen = seen
    with mock.patch.object(messages_base.BaseStorage, 'add', autospec=True,
                           side_effect=record):
        yield seen
    if request.node.get_closest_marker('error_messages') is None:
        assert not seen.texts('error'), \
            'unexpected error messages: %s' % seen.texts('error')
