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

"""Entries name their cloud, their batch, their subject, the providers they
touched and the owner before; provider and compute service deletions are
journaled too."""

from django.db import migrations
from django.db import models


def fill(apps, schema_editor):
    entry_model = apps.get_model('orphan_dashboard', 'JournalEntry')
    for entry in entry_model.objects.using(
            schema_editor.connection.alias).iterator():
        entry.subject = entry.consumer
        entry.touched = ' '.join(sorted(
            set(entry.before) | set(entry.after) | {entry.provider}))
        entry.save(update_fields=['subject', 'touched'])


class Migration(migrations.Migration):

    dependencies = [
        ('orphan_dashboard', '0001_initial'),
    ]

    operations = [
        migrations.AddField('journalentry', 'cloud', models.CharField(
            db_index=True, default='', max_length=255)),
        migrations.AddField('journalentry', 'auth_url', models.CharField(
            blank=True, max_length=255)),
        migrations.AddField('journalentry', 'region', models.CharField(
            blank=True, max_length=255)),
        migrations.AddField('journalentry', 'placement_url', models.CharField(
            blank=True, max_length=255)),
        migrations.AddField('journalentry', 'batch', models.CharField(
            db_index=True, default='', max_length=32)),
        migrations.AddField('journalentry', 'kind', models.CharField(
            default='allocations', max_length=16)),
        migrations.AddField('journalentry', 'subject', models.CharField(
            db_index=True, default='', max_length=36)),
        migrations.AddField('journalentry', 'touched', models.TextField(
            blank=True, default='')),
        migrations.AddField('journalentry', 'before_project',
                            models.CharField(max_length=64, null=True)),
        migrations.AddField('journalentry', 'before_user',
                            models.CharField(max_length=64, null=True)),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
