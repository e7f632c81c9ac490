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

"""The documentation, built by ``tox -e docs``: Markdown pages (MyST) and
references generated from the code (``_ext/orphan_reference.py``)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '_ext'))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

project = 'orphan-dashboard'
copyright = 'orphan-dashboard developers'
extensions = ['myst_parser', 'openstackdocstheme', 'orphan_reference']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
master_doc = 'index'
exclude_patterns = ['_build']
html_theme = 'openstackdocs'
openstackdocs_repo_name = 'openstack/orphan-dashboard'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
myst_heading_anchors = 3
suppress_warnings = ['myst.xref_missing']
