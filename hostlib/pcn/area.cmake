# swemu_hostlib_pcn: PCN's handshake, DDL generator and experiment (on a topology: swemu_app's
# topology files and routes).
swemu_hostlib_area(pcn DEPS swemu_hostlib_common swemu_app)
