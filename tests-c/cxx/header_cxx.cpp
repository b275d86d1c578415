// The generated header compiles as C++ with warnings as errors, and its
// functions have C linkage (this links against the C ABI of libb2nd).
#include <b2nd.h>
#include <cstring>

int main() {
  blosc2_init();
  int ok = std::strcmp(blosc2_get_version_string(), BLOSC2_VERSION_STRING) == 0;
  ok = ok && std::strcmp(blosc2_error_string(BLOSC2_ERROR_STREAM), "Bad stream") == 0;
  blosc2_destroy();
  return ok ? 0 : 1;
}
