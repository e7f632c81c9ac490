"""The change journal: every write to Placement, recorded before it happens.

Stored in a database alias of its own (:data:`journal.DATABASE`), since
Horizon itself has no database.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class JournalEntry(models.Model):
    PENDING = 'pending'
    APPLIED = 'applied'
    REFUSED = 'refused'
    FAILED = 'failed'
    STATUSES = (
        (PENDING, _('No answer recorded')),
        (APPLIED, _('Applied')),
        (REFUSED, _('Refused')),
        (FAILED, _('Failed')),
    )

    created = models.DateTimeField(auto_now_add=True, db_index=True)
    finished = models.DateTimeField(null=True)
    source = models.CharField(max_length=16)
    user_id = models.CharField(max_length=64, blank=True)
    user_name = models.CharField(max_length=255, blank=True)
    project_id = models.CharField(max_length=64, blank=True)
    project_name = models.CharField(max_length=255, blank=True)

    action = models.CharField(max_length=32)
    verdict = models.CharField(max_length=32)
    reason = models.TextField(blank=True)
    provider = models.CharField(max_length=36, db_index=True)
    consumer = models.CharField(max_length=36, db_index=True)
    consumer_project = models.CharField(max_length=64, null=True)
    consumer_user = models.CharField(max_length=64, null=True)
    generation = models.IntegerField(null=True)
    before = models.JSONField()
    after = models.JSONField()

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
        """Every provider this entry touched, for filtering by provider."""
        return sorted(set(self.before) | set(self.after) | {self.provider})
