"""The audit engine: plain data in, verdicts and plans out; no Django, no
HTTP (see ``model``, ``classify``, ``plan``)."""
