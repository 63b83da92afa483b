# swemu_hostlib_atp: ATP's worker, PS, quantization, job set-up and the host API.
swemu_hostlib_area(atp DEPS swemu_hostlib_common TBB::tbb)
