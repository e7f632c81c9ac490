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

"""Horizon's objects frozen once it is loaded, for the deployment's WSGI
script (``horizon_frozen.wsgi`` beside this module, or a line added to
Horizon's own ``openstack_dashboard/wsgi.py``): ``doc/source/operations.md``,
"Horizon's garbage collector on the largest clouds".

Python's cyclic collector walks every object a process tracks in each of
its full passes, and a page that falls in one is late by the pass; frozen
objects are never walked again, nor ever collected. Horizon's and
Django's own, loaded once, stay for the life of the process anyway. The
panel never calls this: the process is Horizon's, shared with every
dashboard, and only whoever runs it decides what it keeps for good.
"""

import gc

from django.urls import get_resolver


def frozen(application):
    """``application`` (Horizon's, made), once every dashboard's and
    panel's URLs are loaded, which Horizon does on the first reverse, and
    every object the process then holds is frozen."""
    get_resolver().reverse_dict
    gc.collect()
    gc.freeze()
    return application
