/* The tool's version and the commit it was built from (the build passes both; see Makefile). */
#ifndef GRT_TOOL_VERSION_H
#define GRT_TOOL_VERSION_H

#include "trace/grt_format.h"
#include "version.h" /* generated: GRT_TOOL_VERSION, GRT_GIT_COMMIT */

#endif
