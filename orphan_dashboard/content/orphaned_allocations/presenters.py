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

"""What the panel's rows show of the engine's findings: names next to
the ids, translated labels."""

from orphan_dashboard.content.orphaned_allocations import labels


class ShownFinding:
    """A finding with what its row shows next to the ids: Keystone's
    project and user names, the hypervisor of the server's host."""

    def __init__(self, finding, names, hypervisors, providers=None):
        self.finding = finding
        self.provider_name = (providers or {}).get(finding.provider,
                                                   finding.provider)
        self.project_name = names['projects'].get(finding.project_id)
        self.user_name = names['users'].get(finding.user_id)
        self.hypervisor = hypervisors.get(finding.host)
        self.reason = labels.owner_named(finding.reason, names)

    def __getattr__(self, name):
        return getattr(self.finding, name)


def shown_findings(findings, report, names):
    hypervisors = report.hypervisors()
    return [ShownFinding(f, names, hypervisors, report.names)
            for f in findings]
