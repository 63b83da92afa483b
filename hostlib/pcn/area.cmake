# swemu_hostlib_pcn: PCN's handshake, DDL generator and experiment.
swemu_hostlib_area(pcn DEPS swemu_hostlib_common)
