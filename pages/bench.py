import streamlit as st

st.title("bench")
st.write("Being built.")
