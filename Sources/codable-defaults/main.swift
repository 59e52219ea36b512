// Placeholder: the command-line tool is being written.
print("codable-defaults: not yet implemented")
