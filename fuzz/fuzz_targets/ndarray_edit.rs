#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| b2nd_fuzz::bodies::ndarray_edit(data));
