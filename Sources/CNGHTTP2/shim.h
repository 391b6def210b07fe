// libnghttp2, Debian's libnghttp2-dev (1.52), found through pkg-config as libnghttp2.
#include <nghttp2/nghttp2.h>
