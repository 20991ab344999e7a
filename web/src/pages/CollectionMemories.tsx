/** Placeholder: being written. */
export function CollectionMemories() {
  return <p>CollectionMemories</p>;
}
