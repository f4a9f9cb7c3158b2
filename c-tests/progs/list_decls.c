/* Only includes the header: test_header.sh asks the compiler (-aux-info) for every function
 * it declares. */
#include "biren_runtime.h"
