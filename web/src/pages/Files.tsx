/** Placeholder: being written. */
export function Files() {
  return <p>Files</p>;
}
