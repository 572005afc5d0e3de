// SPDX-License-Identifier: BSD-2-Clause
/*
 * Without libFuzzer: run a fuzz target on every file of the corpus
 * directories (or files) named on the command line, as the default test
 * run does. Prints how many inputs ran; a crash or sanitizer report is
 * the failure.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned runs = 0;
	int i;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;
		char path[4096];

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: not found\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			runs += run_file(argv[i]) == 0;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 de->d_name);
			runs += run_file(path) == 0;
		}
		if (d)
			closedir(d);
	}
	printf("replay: %u inputs\n", runs);
	return runs ? 0 : 1;
}
