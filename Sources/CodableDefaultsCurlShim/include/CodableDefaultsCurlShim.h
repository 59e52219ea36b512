#ifndef CODABLE_DEFAULTS_CURL_SHIM_H
#define CODABLE_DEFAULTS_CURL_SHIM_H

// Calls of libcurl's two variadic functions, `curl_easy_setopt` and `curl_easy_getinfo`, for CodableDefaultsEtcd
// (Client/Internal/CurlHTTP.swift), which finds libcurl in the process at run time (`dlsym`) and has no libcurl
// headers. Swift cannot call a C variadic function through a pointer, and calling one through a pointer of fixed
// parameters is undefined: calling conventions may pass a variadic argument elsewhere than a fixed one (64-bit
// PowerPC), or expect more of the caller (x86-64 sets %al to the number of vector registers used). Each function
// here calls the function it is given through a pointer of the variadic type libcurl declares, so the C compiler
// sets the call up as the platform's convention says.
//
// `function` must be libcurl's own `curl_easy_setopt` or `curl_easy_getinfo` (as `dlsym` returns it), `easy` a
// handle from that libcurl's `curl_easy_init`, and the option or item one whose argument has the type the
// function's name says (curl/curl.h); the result is libcurl's `CURLcode`, 0 when it succeeded. The types are C's:
// libcurl's `long` and pointers, with `int` for its enumerations.

/// A C function of any type, as a callback is handed to libcurl (cast back to its real type before a call).
typedef void (*codable_defaults_curl_function)(void);

/// `curl_easy_setopt(easy, option, value)` for an option that takes a `long` (`CURLOPT_POST`, say).
int codable_defaults_curl_setopt_long(void *function, void *easy, int option, long value);

/// `curl_easy_setopt(easy, option, value)` for an option that takes an object pointer (`CURLOPT_URL`,
/// `CURLOPT_WRITEDATA`, ...); libcurl keeps a string's pointer only when the option says so.
int codable_defaults_curl_setopt_pointer(void *function, void *easy, int option, const void *value);

/// `curl_easy_setopt(easy, option, value)` for an option that takes a callback (`CURLOPT_WRITEFUNCTION`, ...):
/// `value` is the callback with the parameters libcurl documents for the option, cast to this type.
int codable_defaults_curl_setopt_function(void *function, void *easy, int option,
                                          codable_defaults_curl_function value);

/// `curl_easy_getinfo(easy, info, value)` for an item that is a `long` (`CURLINFO_RESPONSE_CODE`, say): stores it
/// in `*value`.
int codable_defaults_curl_getinfo_long(void *function, void *easy, int info, long *value);

/// `curl_easy_getinfo(easy, info, value)` for an item that is a string (`CURLINFO_CAINFO`, say): stores
/// libcurl's pointer, or NULL, in `*value`; the string stays libcurl's.
int codable_defaults_curl_getinfo_string(void *function, void *easy, int info, char **value);

#endif
