/* bench/machine_line.h — print_machine(): the `# machine:` line every bench prints first
 * (bench/machine_line.c; link it into the C bench programs). */
#ifndef TIDE_BENCH_MACHINE_LINE_H
#define TIDE_BENCH_MACHINE_LINE_H

/* Print "# machine: <CPU model>, <n> logical CPUs, <caches>; tide: ISA <isa>, <n> threads; products: <plan>". */
void print_machine(void);

#endif
