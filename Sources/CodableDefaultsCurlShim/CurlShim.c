#include "CodableDefaultsCurlShim.h"

// libcurl's declarations, with its typedefs spelled out (`CURL *` is `void *`; `CURLoption`, `CURLINFO` and
// `CURLcode` are enumerations, passed and returned as `int`).
typedef int (*codable_defaults_curl_setopt)(void *easy, int option, ...);
typedef int (*codable_defaults_curl_getinfo)(void *easy, int info, ...);

int codable_defaults_curl_setopt_long(void *function, void *easy, int option, long value) {
    return ((codable_defaults_curl_setopt)function)(easy, option, value);
}

int codable_defaults_curl_setopt_pointer(void *function, void *easy, int option, const void *value) {
    return ((codable_defaults_curl_setopt)function)(easy, option, value);
}

int codable_defaults_curl_setopt_function(void *function, void *easy, int option,
                                          codable_defaults_curl_function value) {
    return ((codable_defaults_curl_setopt)function)(easy, option, value);
}

int codable_defaults_curl_getinfo_long(void *function, void *easy, int info, long *value) {
    return ((codable_defaults_curl_getinfo)function)(easy, info, value);
}

int codable_defaults_curl_getinfo_string(void *function, void *easy, int info, char **value) {
    return ((codable_defaults_curl_getinfo)function)(easy, info, value);
}
