// The system's zlib, for the SDK's gzip uploads.
#include <zlib.h>
