// Placeholder: the test fixture is being written.
print("fixture")
