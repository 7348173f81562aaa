print("gattway")
