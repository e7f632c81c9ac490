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

"""django-compressor's compressors, keying a block's cache once a process.

With compression on, as Horizon runs it, every ``{% compress %}`` block of
every page parses its HTML, looks each script and stylesheet up through the
static files finders and reads its modification time, only to key the
cache: most of a page's render.  The files stay put through a test
session, so each block's files are found (a missing one still fails the
page) and their times read the first time its content is seen, and its
next renders reuse them.
"""

from compressor import css
from compressor import js
from django.utils.functional import cached_property

_MTIMES = {}
"""``(compressor class, block content)``: its files' modification times."""


class KeyedOnce:

    @cached_property
    def mtimes(self):
        key = (type(self), self.content)
        if key not in _MTIMES:
            _MTIMES[key] = super().mtimes
        return _MTIMES[key]


class JsCompressor(KeyedOnce, js.JsCompressor):
    pass


class CssCompressor(KeyedOnce, css.CssCompressor):
    pass
