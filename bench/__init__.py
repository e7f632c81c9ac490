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

"""The panel's benchmark: ``python -m bench --sizes 1000,5000,10000``.

Not a test (pytest collects ``tests/`` only): a script that seeds a big
sandbox cloud (:mod:`bench.cloud`, started by :mod:`bench.server`), times
our sweep, refresh and page against their floor, ``nova-manage placement
audit`` and Horizon (:mod:`bench.measure`, :mod:`bench.page`) and prints a
table (:mod:`bench.__main__`).
"""
