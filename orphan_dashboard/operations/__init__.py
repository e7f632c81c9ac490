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

"""The application layer: what the panel and ``orphan-audit`` both do.

Each use case takes what it works with (:class:`~api.client.Clients`,
a :class:`~writing.journal.Journal`, a :class:`~sweep.store.Store`)
and the settings' values as parameters: it reads no settings and knows no
request, so the panel's ``service`` (a Django request adapter) and the
CLI's ``commands`` (parsing and rendering) run the same code.  It may
import ``reading``, ``writing``, ``audit`` and ``api``; never ``content``
or ``cli``.
"""
