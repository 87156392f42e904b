"""The fault suite (issue 11): kill -9 at seeded points, generated bad inputs, corrupted run folders, a full disk."""
