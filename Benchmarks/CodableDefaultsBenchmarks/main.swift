// Placeholder: the benchmark program is being written.
print("benchmarks")
