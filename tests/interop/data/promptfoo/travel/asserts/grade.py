def mentions_city(output, context):
    return "Lumenport" in output
