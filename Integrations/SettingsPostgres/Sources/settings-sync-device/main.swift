print("device")
