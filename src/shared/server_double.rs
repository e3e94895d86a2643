//! The server's own reading of a double, which RedisBloom's commands use: what
//! [`parse::float`](super::parse::float) asks for text that is not plain decimal.

use redis_module::raw;

/// `bytes` read by `RedisModule_StringToDouble`; `None` for text the server takes for no
/// number.
pub fn read(bytes: &[u8]) -> Option<f64> {
    // SAFETY: the API's function pointers, set once when the module is loaded.
    let functions = unsafe {
        (raw::RedisModule_CreateString, raw::RedisModule_StringToDouble, raw::RedisModule_FreeString)
    };
    let (Some(create), Some(to_double), Some(free)) = functions else {
        return None;
    };
    let mut value = 0.0;
    // SAFETY: a string of the server's, made from bytes we hold and freed before returning;
    // with no context, it is nobody else's to free.
    let read = unsafe {
        let string = create(std::ptr::null_mut(), bytes.as_ptr().cast(), bytes.len());
        if string.is_null() {
            return None;
        }
        let read = to_double(string, &raw mut value);
        free(std::ptr::null_mut(), string);
        read
    };
    (read == raw::REDISMODULE_OK as std::os::raw::c_int).then_some(value)
}
