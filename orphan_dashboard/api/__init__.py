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

"""One module per service; every call traced with osprofiler."""

from osprofiler import profiler


def trace(func):
    """``osprofiler`` trace under the function's dotted name (no arguments:
    they may carry tokens)."""
    name = '%s.%s' % (func.__module__.rsplit('.', 1)[-1], func.__name__)
    return profiler.trace(name, hide_args=True)(func)
