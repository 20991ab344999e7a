/** Placeholder: being written. */
export function CollectionHealth() {
  return <p>CollectionHealth</p>;
}
