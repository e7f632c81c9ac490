"""Batches of trims over consumers on two providers, for the fault tests."""

from orphan_dashboard.api import placement as api
from orphan_dashboard.audit import model as m
from orphan_dashboard.audit import parse

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def trim_batch(build, count):
    """``count`` consumers on providers old and new, and the plans trimming
    each one to new."""
    old, new = build.provider('old'), build.provider('new')
    consumers = [build.allocate({old: SMALL, new: SMALL})
                 for _ in range(count)]
    plans = [m.Plan(m.TRIM, c, old, m.MOVED, 'moved', 1, 'p', 'u',
                    {old: SMALL, new: SMALL}, {new: SMALL})
             for c in consumers]
    return consumers, plans


def held(placement, consumers):
    """Each consumer's allocations, as Placement holds them now."""
    return [parse.consumer(c, api.consumer_allocations(placement, c))
            .allocations for c in consumers]
