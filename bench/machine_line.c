/* bench/machine_line.c — the `# machine:` line the C benches print first (bench/timing.lua
 * prints the same for the Lua ones): CPU model, logical CPUs, data caches, tide's ISA and threads. */
#include "machine_line.h"

#include <stdio.h>
#include <string.h>

#include "tide/runtime.h"

/* The first line of file path, without its newline, into buf ("" if unreadable). */
static const char *first_line(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  buf[0] = '\0';
  if (f && fgets(buf, (int)size, f)) buf[strcspn(buf, "\n")] = '\0';
  if (f) fclose(f);
  return buf;
}

/* The `# machine:` line every bench prints (bench/timing.lua's, in C): CPU
 * model, logical CPUs, data caches, the ISA tide chose and its threads. */
void print_machine(void) {
  char model[256] = "unknown CPU", line[512], caches[256] = "", dir[128], level[16], type[32], size[32];
  int cpus = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "processor", 9)) cpus++;
    char *colon = strchr(line, ':');
    if (colon && !strncmp(line, "model name", 10) && cpus == 1)
      snprintf(model, sizeof model, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
  }
  if (f) fclose(f);
  for (int i = 0; i < 10; i++) {
    snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d/", i);
    snprintf(line, sizeof line, "%slevel", dir);
    if (!*first_line(line, level, sizeof level)) break;
    snprintf(line, sizeof line, "%stype", dir);
    first_line(line, type, sizeof type);
    snprintf(line, sizeof line, "%ssize", dir);
    first_line(line, size, sizeof size);
    if (strstr(type, "Instruction")) continue;
    size_t n = strlen(caches);
    snprintf(caches + n, sizeof caches - n, "%sL%s%s %s", n ? ", " : "", level, strstr(type, "Data") ? "d" : "", size);
  }
  printf("# machine: %s, %d logical CPUs, %s; tide: ISA %s, %d threads; products: %s\n", model, cpus,
         *caches ? caches : "caches unknown", tide_cpu_isa(), tide_get_num_threads(), tide_cpu_gemm_plan());
}
