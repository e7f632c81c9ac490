"""Developer sandbox: a real Keystone, Nova and Placement on loopback.

``python -m sandbox up``   start the cloud (see ``python -m sandbox up -h``)
``python -m sandbox demo`` the cloud with every incident staged, plus Horizon

Only for development and tests: it runs Nova's functional-test fixtures.
"""
