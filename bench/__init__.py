"""The benchmark of issue 6: ``python -m bench --sizes 1000,5000,10000``.

Not a test (pytest collects ``tests/`` only): a script that seeds a big
sandbox cloud (:mod:`bench.cloud`, started by :mod:`bench.server`), times
our sweep, refresh and page against their floor, ``nova-manage placement
audit`` and Horizon (:mod:`bench.measure`, :mod:`bench.page`) and prints a
table (:mod:`bench.__main__`).
"""
