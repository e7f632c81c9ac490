"""Names of the staged incidents (importable without Nova)."""
NAMES = ('evacuation', 'deleted_behind_nova', 'failed_migration',
         'unconfirmed_resize', 'healed_away', 'wrong_amount',
         'port_bandwidth_left', 'pre_pike_consumer', 'retired_host',
         'healthy')
