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

"""No floor that only forwards: a function whose body is one call of
ours that passes on its own parameters (or their attributes) and adds
nothing, no constant, no expression, is a hop a reader walks through for
nothing.

Methods a framework calls by name (a Horizon table's ``get_link_url``, a
cliff command's ``take_action``) may forward: their name is not ours to
drop.
"""

import ast
import pathlib

import orphan_dashboard

PACKAGE = pathlib.Path(orphan_dashboard.__file__).parent

HOOKS = frozenset((
    # Django, Horizon and cliff call these by name.
    '__str__', '__repr__', '__getattr__', '__call__', 'add_arguments',
    'allowed', 'can_be_selected', 'get_data', 'get_link_url',
    'get_object_id', 'get_object_display', 'get_parser', 'handle',
    'has_more_data', 'has_prev_data', 'take_action', 'ready',
))


def _own_value(node, params):
    """Whether ``node`` is a parameter, or an attribute of one, as it
    came in."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Starred):
        node = node.value
    return isinstance(node, ast.Name) and node.id in params


def _chain_root(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def forwards(function, modules):
    """Whether ``function`` only passes its parameters on to one function
    or method of a module of ``modules``, of ``self`` or of a
    parameter."""
    body = function.body
    if (body and isinstance(body[0], ast.Expr) and
            isinstance(body[0].value, ast.Constant)):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):
        return False
    call = body[0].value
    if not isinstance(call, ast.Call):
        return False
    arguments = function.args
    params = {a.arg for a in (arguments.posonlyargs + arguments.args +
                              arguments.kwonlyargs)}
    params.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a)
    params.discard('self')
    if _chain_root(call.func) not in params | modules | {'self'}:
        return False
    passed = list(call.args) + [k.value for k in call.keywords]
    return bool(passed) and all(_own_value(a, params) for a in passed)


def _ours(tree):
    """The names a module's calls may forward to: what it imports, and
    its own functions and classes."""
    imports = (node for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)))
    return {(alias.asname or alias.name).split('.')[0]
            for node in imports for alias in node.names} | {
        node.name for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def forwarders(root=PACKAGE):
    """``path name`` of every function of ``root`` that only
    forwards."""
    found = []
    for path in sorted(root.rglob('*.py')):
        if 'migrations' in path.parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        modules = _ours(tree)
        for node in ast.walk(tree):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                    node.name not in HOOKS and forwards(node, modules)):
                found.append('%s %s' % (path.relative_to(root), node.name))
    return found


def test_no_function_only_forwards():
    assert forwarders() == []


def test_the_rule_sees_a_forwarder_and_spares_a_fact():
    tree = ast.parse(
        'def hop(clients, settings, name):\n'
        '    """Doc."""\n'
        '    return work(clients.placement, name, min_age=settings.min_age)\n'
        'def fact(client, name):\n'
        '    return client.get("/resource_providers", name=name)\n'
        'def sum_(a, b):\n'
        '    return work(a + b)\n'
        'def label(code):\n'
        '    return LABELS.get(code, code)\n')
    hop, fact, sum_, label = tree.body
    modules = {'work'}
    assert forwards(hop, modules)
    assert not forwards(fact, modules)
    assert not forwards(sum_, modules)
    assert not forwards(label, modules)
