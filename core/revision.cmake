# SPDX-License-Identifier: BSD-2-Clause
# Run at every build (not only at configure time): writes OUT with the git
# revision of SRC, or "unknown" outside a git checkout (a release
# tarball), and leaves OUT untouched when it has not changed, so that an
# unchanged revision rebuilds nothing.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
	OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
	RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
	set(rev "unknown")
endif()
set(text "#define IBW_REVISION \"${rev}\"\n")
if(EXISTS "${OUT}")
	file(READ "${OUT}" old)
else()
	set(old "")
endif()
if(NOT old STREQUAL text)
	file(WRITE "${OUT}" "${text}")
endif()
