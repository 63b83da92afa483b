# swemu_hostlib_dpdk: the DPDK port transport (virtio_user to swemu, NICs).
swemu_hostlib_area(dpdk DEPS swemu_hostlib_common swemu_dpdk_base)
