# swemu_hostlib_testbed: networks of real-time swemu processes (configs, scripts, processes,
# vhost-user sockets); above the endpoints, below tools/ and hostlib/python.
swemu_hostlib_area(testbed DEPS swemu_hostlib_atp swemu_wire swemu_app)
