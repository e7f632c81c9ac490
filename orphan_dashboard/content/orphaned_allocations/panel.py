from django.conf import settings
from django.utils.translation import gettext_lazy as _

import horizon


class OrphanedAllocations(horizon.Panel):
    name = _("Orphaned Allocations")
    slug = 'orphaned_allocations'
    permissions = ('openstack.services.compute',
                   'openstack.services.placement')
    policy_rules = (("compute", "os_compute_api:os-hypervisors:list"),)

    def allowed(self, context):
        if (('compute' in settings.SYSTEM_SCOPE_SERVICES) !=
                bool(context['request'].user.system_scoped)):
            return False
        return super().allowed(context)
