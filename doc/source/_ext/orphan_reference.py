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

"""References generated from the code, so that they cannot drift from it:
every setting (``orphan_dashboard.conf``), every ``orphan-audit`` command
and option (its argparse parser), every verdict and action (the engine's
registry)."""

import argparse

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _literal(value):
    return '``%r``' % (value,)


def _table(header, rows):
    """A list-table in reStructuredText."""
    lines = ['.. list-table::', '   :header-rows: 1', '']
    for row in [header] + rows:
        first, *rest = row
        lines.append('   * - %s' % first)
        lines.extend('     - %s' % cell for cell in rest)
    return lines


class _Generated(SphinxDirective):
    def lines(self):
        raise NotImplementedError

    def run(self):
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(self.lines(), 'generated'),
                                self.content_offset, node)
        return node.children


class Settings(_Generated):
    def lines(self):
        from orphan_dashboard import conf
        return _table(['Setting', 'Default', 'What it does'], [
            ['``%s``' % s.name, _literal(s.default), ' '.join(s.doc.split())]
            for s in conf.SETTINGS])


def _option(action):
    names = ', '.join('``%s``' % o for o in action.option_strings) or \
        '``%s``' % (action.metavar or action.dest)
    if action.metavar and action.option_strings:
        names += ' *%s*' % action.metavar
    return names


def _help(action):
    text = ' '.join((action.help or '').split())
    if action.default not in (None, False, argparse.SUPPRESS, [], ()) and \
            '%(default)' not in (action.help or ''):
        text += ' (default: %s)' % _literal(action.default)
    return (text % {'default': action.default, 'prog': 'orphan-audit'}
            if '%(' in text else text)


def _options(parser):
    return [[_option(a), _help(a)] for a in parser._actions
            if a.help != argparse.SUPPRESS and
            not isinstance(a, (argparse._HelpAction,
                               argparse._SubParsersAction))]


class Commands(_Generated):
    def lines(self):
        from orphan_dashboard.cli import options
        parser = options.build_parser()
        lines = [' '.join(parser.description.split()), '',
                 'Options of every command:', '']
        lines += _table(['Option', 'What it does'], _options(parser))
        [subparsers] = [a for a in parser._actions
                        if isinstance(a, argparse._SubParsersAction)]
        helps = {c.dest: c.help for c in subparsers._choices_actions}
        for name, sub in subparsers.choices.items():
            title = 'orphan-audit %s' % name
            lines += ['', title, '-' * len(title), '',
                      ' '.join((helps.get(name) or '').split()) + '.', '']
            rows = _options(sub)
            if rows:
                lines += _table(['Option', 'What it does'], rows)
        return lines


class Verdicts(_Generated):
    def lines(self):
        from orphan_dashboard.audit import model
        actions = model.ACTION_KINDS
        lines = _table(
            ['Verdict', 'Shown as', 'Repairs it may offer',
             'Recommended by *Fix recommended*'],
            [['``%s``' % kind.code, kind.title,
              ', '.join(actions[a].title for a in kind.actions) or '-',
              'yes' if kind.actions and kind.recommended else 'no']
             for kind in model.VERDICT_KINDS.values()])
        lines += ['']
        lines += _table(
            ['Action', 'Shown as', 'Preferred (1 first) when several fit'],
            [['``%s``' % kind.code, kind.title,
              kind.priority if kind.priority is not None else
              'not a repair a finding offers']
             for kind in actions.values()])
        return lines


def setup(app):
    app.add_directive('orphan-settings', Settings)
    app.add_directive('orphan-commands', Commands)
    app.add_directive('orphan-verdicts', Verdicts)
    return {'parallel_read_safe': True, 'version': '1'}
