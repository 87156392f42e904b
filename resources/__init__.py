"""The shipped resources: the application icon and screenshots, package data."""
