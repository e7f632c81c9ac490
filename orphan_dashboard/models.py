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

"""The change journal: every write to Placement, recorded before it happens.

Stored in a database alias of its own (:data:`journal.DATABASE`), since
Horizon itself has no database.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from orphan_dashboard.api import client


class JournalEntry(models.Model):
    PENDING = 'pending'
    APPLIED = 'applied'
    REFUSED = 'refused'
    FAILED = 'failed'
    UNKNOWN = 'unknown'
    """The answer was lost and no read back proved where the write left
    its subject: it may have landed, or may yet; restorable."""
    STATUSES = (
        (PENDING, _('No answer recorded')),
        (APPLIED, _('Applied')),
        (REFUSED, _('Refused')),
        (FAILED, _('Failed')),
        (UNKNOWN, _('Outcome unknown')),
    )

    ALLOCATIONS = 'allocations'
    PROVIDER = 'provider'
    SERVICE = 'service'

    created = models.DateTimeField(auto_now_add=True, db_index=True)
    finished = models.DateTimeField(null=True)
    cloud = models.CharField(max_length=255, db_index=True, default='')
    """Which cloud was written: Keystone URL, region and the Placement
    service's id in its catalog (:class:`journal.Cloud`)."""
    auth_url = models.CharField(max_length=255, blank=True)
    region = models.CharField(max_length=255, blank=True)
    placement_url = models.CharField(max_length=255, blank=True)
    batch = models.CharField(max_length=32, db_index=True, default='')
    """Entries written by one confirm (a batch of repairs, a
    decommission) share it, so they can be restored together."""
    source = models.CharField(max_length=16)
    user_id = models.CharField(max_length=64, blank=True)
    user_name = models.CharField(max_length=255, blank=True)
    project_id = models.CharField(max_length=64, blank=True)
    project_name = models.CharField(max_length=255, blank=True)

    kind = models.CharField(max_length=16, default=ALLOCATIONS)
    """A consumer's allocations, a whole provider (``before`` holds its
    record: parent, inventories, traits, aggregates), or a compute service
    (deleted for good: never restored)."""
    subject = models.CharField(max_length=36, db_index=True, default='')
    """The consumer, or the provider of a provider entry: changes to a
    subject are restored latest first (:func:`journal.restorable`)."""
    touched = models.TextField(blank=True, default='')
    """Every provider the entry touched, space-separated, for the
    provider filter."""
    action = models.CharField(max_length=32)
    verdict = models.CharField(max_length=32)
    reason = models.TextField(blank=True)
    provider = models.CharField(max_length=36, db_index=True)
    consumer = models.CharField(max_length=36, db_index=True)
    consumer_project = models.CharField(max_length=64, null=True)
    consumer_user = models.CharField(max_length=64, null=True)
    """The owner the write gives the consumer."""
    before_project = models.CharField(max_length=64, null=True)
    before_user = models.CharField(max_length=64, null=True)
    """The owner before, when the write changed it (``set_owner``)."""
    generation = models.IntegerField(null=True)
    before = models.JSONField()
    after = models.JSONField()
    ports = models.JSONField(default=dict)
    """``{port id: {'name', 'revision', 'before', 'after'}}``: the
    ``binding:profile`` of each port the write gave a new provider in
    Neutron first (:attr:`~audit.model.Plan.ports`), restored with it."""

    status = models.CharField(max_length=16, choices=STATUSES,
                              default=PENDING)
    new_generation = models.IntegerField(null=True)
    message = models.TextField(blank=True)
    restores = models.ForeignKey('self', null=True, on_delete=models.SET_NULL,
                                 related_name='restored_by')

    class Meta:
        ordering = ('-created', '-id')
        verbose_name_plural = 'journal entries'

    @property
    def providers(self):
        return self.touched.split()

    @property
    def placement_service_id(self):
        """The id of the Placement service of the cloud the entry was
        written to (its Keystone URL and region it records itself)."""
        return client.service_id_in(self.cloud)

    @property
    def changed_nothing(self):
        """Placement answered the write with an error and the consumer was
        then found as it was: the entry is no change to restore."""
        return self.status == self.FAILED and \
            self.new_generation is not None and \
            self.new_generation == self.generation
