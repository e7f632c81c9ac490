"""Horizon-style view tests: engine objects in, service calls mocked."""

from unittest import mock

from openstack_dashboard.test import helpers

from orphan_dashboard import service

PLACEMENT = {
    'type': 'placement', 'name': 'placement',
    'endpoints_links': [],
    'endpoints': [{'region': 'RegionOne', 'interface': interface,
                   'url': 'http://placement.example.com/placement'}
                  for interface in ('admin', 'internal', 'public')],
}


class AdminViewTests(helpers.BaseAdminViewTests):
    """Admin tests with a placement endpoint and no way to reach a cloud.

    Horizon's guard patches http.client, which urllib3 bypasses: patch
    keystoneauth itself so an unmocked call fails the test.
    """

    def _setup_test_data(self):
        super()._setup_test_data()
        self.service_catalog.append(PLACEMENT)

    def setUp(self):
        super().setUp()
        patcher = mock.patch('keystoneauth1.session.Session.request',
                             side_effect=AssertionError('unmocked API call'))
        patcher.start()
        self.addCleanup(patcher.stop)


__all__ = ['AdminViewTests', 'helpers', 'service']
